<?php
/**
 * Settings → Analytics Chart: the edge's URL, for administrators (`manage_options`).
 *
 * @package AnalyticsChart
 */

defined( 'ABSPATH' ) || exit;

/**
 * Keeps a well-formed URL; anything else is refused with a message and the old value kept.
 *
 * @param mixed $value What was submitted.
 * @return string
 */
function analytics_chart_sanitize_edge_url( $value ) {
	$previous = (string) get_option( ANALYTICS_CHART_OPTION, '' );
	if ( is_string( $value ) && '' === trim( $value ) ) {
		return '';
	}
	$normalized = analytics_chart_normalize_edge_url( $value );
	if ( null === $normalized ) {
		add_settings_error(
			ANALYTICS_CHART_OPTION,
			'analytics-chart-edge-url',
			__( 'The edge URL must be an http or https address without a query, for example https://app.example.com/analytics.', 'analytics-chart' )
		);
		return $previous;
	}
	return $normalized;
}

/** Registers the setting, its section and its field. */
function analytics_chart_register_setting() {
	register_setting(
		'analytics_chart',
		ANALYTICS_CHART_OPTION,
		array(
			'type'              => 'string',
			'default'           => '',
			'sanitize_callback' => 'analytics_chart_sanitize_edge_url',
			'show_in_rest'      => false,
		)
	);
	add_settings_section( 'analytics_chart_edge', __( 'Edge', 'analytics-chart' ), '__return_false', 'analytics-chart' );
	add_settings_field(
		ANALYTICS_CHART_OPTION,
		__( 'Edge URL', 'analytics-chart' ),
		'analytics_chart_edge_url_field',
		'analytics-chart',
		'analytics_chart_edge',
		array( 'label_for' => ANALYTICS_CHART_OPTION )
	);
}
add_action( 'admin_init', 'analytics_chart_register_setting' );

/** The URL field. */
function analytics_chart_edge_url_field() {
	printf(
		'<input type="url" class="regular-text code" id="%1$s" name="%1$s" value="%2$s" placeholder="https://app.example.com/analytics" /><p class="description">%3$s</p>',
		esc_attr( ANALYTICS_CHART_OPTION ),
		esc_attr( (string) get_option( ANALYTICS_CHART_OPTION, '' ) ),
		esc_html__( 'Where your analytics-chart edge is mounted. Chart links under it become charts, and the block and shortcode load charts from it.', 'analytics-chart' )
	);
}

/** Adds the page under Settings. */
function analytics_chart_add_settings_page() {
	add_options_page(
		__( 'Analytics Chart', 'analytics-chart' ),
		__( 'Analytics Chart', 'analytics-chart' ),
		'manage_options',
		'analytics-chart',
		'analytics_chart_render_settings_page'
	);
}
add_action( 'admin_menu', 'analytics_chart_add_settings_page' );

/** Renders the page; options.php checks the nonce and the capability on submit. */
function analytics_chart_render_settings_page() {
	if ( ! current_user_can( 'manage_options' ) ) {
		return;
	}
	echo '<div class="wrap"><h1>' . esc_html( get_admin_page_title() ) . '</h1>';
	echo '<form action="' . esc_url( admin_url( 'options.php' ) ) . '" method="post">';
	settings_fields( 'analytics_chart' );
	do_settings_sections( 'analytics-chart' );
	submit_button();
	echo '</form></div>';
}
