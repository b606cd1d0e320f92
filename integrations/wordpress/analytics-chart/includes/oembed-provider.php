<?php
/**
 * The edge as a registered oEmbed provider: a chart's embed URL alone on its line becomes the
 * chart for every role, with no discovery and no sandbox around a provider the site trusts.
 *
 * @package AnalyticsChart
 */

defined( 'ABSPATH' ) || exit;

/** Registers `<edge>/embed/*` with the edge's `/oembed` endpoint. */
function analytics_chart_register_oembed_provider() {
	$edge = analytics_chart_edge_url();
	if ( null === $edge ) {
		return;
	}
	wp_oembed_add_provider( $edge . '/embed/*', $edge . '/oembed' );
}
add_action( 'init', 'analytics_chart_register_oembed_provider' );
