<?php
/**
 * The Analytics Chart block: a dynamic block, its markup made on the server at render time.
 *
 * @package AnalyticsChart
 */

defined( 'ABSPATH' ) || exit;

/**
 * Renders the block.
 *
 * @param array $attributes The block's attributes.
 * @return string
 */
function analytics_chart_render_block( $attributes ) {
	return analytics_chart_frame( is_array( $attributes ) ? $attributes : array() );
}

/** Registers the block from its block.json. */
function analytics_chart_register_block() {
	register_block_type(
		dirname( __DIR__ ) . '/block',
		array( 'render_callback' => 'analytics_chart_render_block' )
	);
}
add_action( 'init', 'analytics_chart_register_block' );
