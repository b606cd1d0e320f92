<?php
/**
 * `[analytics_chart id="…" height="320" theme="dark" range="7d" title="…"]`.
 *
 * @package AnalyticsChart
 */

defined( 'ABSPATH' ) || exit;

/**
 * Renders the shortcode.
 *
 * @param array|string $attributes As WordPress parsed them.
 * @return string
 */
function analytics_chart_shortcode( $attributes ) {
	$attributes = shortcode_atts(
		array(
			'id'     => '',
			'height' => '',
			'theme'  => '',
			'range'  => '',
			'locale' => '',
			'title'  => '',
		),
		$attributes,
		'analytics_chart'
	);
	return analytics_chart_frame( $attributes );
}
add_shortcode( 'analytics_chart', 'analytics_chart_shortcode' );
