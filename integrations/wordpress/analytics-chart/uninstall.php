<?php
/**
 * Removes the plugin's one option when the plugin is deleted.
 *
 * @package AnalyticsChart
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

delete_option( 'analytics_chart_edge_url' );
