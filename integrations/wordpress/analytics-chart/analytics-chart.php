<?php
/**
 * Plugin Name:       Analytics Chart
 * Description:       Live analytics charts from your analytics-chart edge in posts and pages: paste a chart link, use the Analytics Chart block or the [analytics_chart id="…"] shortcode. Works for Authors and Contributors, who cannot paste scripts or iframes.
 * Version:           0.1.0
 * Requires at least: 6.1
 * Requires PHP:      7.4
 * License:           MIT
 * Text Domain:       analytics-chart
 *
 * @package AnalyticsChart
 */

defined( 'ABSPATH' ) || exit;

/** The option holding the edge's public URL (`https://app.example.com/analytics`). */
const ANALYTICS_CHART_OPTION = 'analytics_chart_edge_url';

require_once __DIR__ . '/includes/edge-url.php';
require_once __DIR__ . '/includes/chart-frame.php';
require_once __DIR__ . '/includes/oembed-provider.php';
require_once __DIR__ . '/includes/shortcode.php';
require_once __DIR__ . '/includes/block.php';
require_once __DIR__ . '/includes/settings-page.php';
