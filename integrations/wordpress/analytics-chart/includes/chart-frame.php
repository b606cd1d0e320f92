<?php
/**
 * The one piece of markup every way of embedding ends in: an iframe of the edge's embed page,
 * built on the server so that no role's content filter ever sees it.
 *
 * @package AnalyticsChart
 */

defined( 'ABSPATH' ) || exit;

/** A query id: a compact JWT (three base64url parts). */
const ANALYTICS_CHART_ID_PATTERN = '/^[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}$/';

/** The embed page's own default height, in pixels. */
const ANALYTICS_CHART_DEFAULT_HEIGHT = 300;

/**
 * The id an author gave: the id itself, or the chart's embed URL on the configured edge.
 *
 * @param string $given Text from a shortcode or block attribute.
 * @param string $edge  The edge URL.
 * @return string|null
 */
function analytics_chart_id_from( $given, $edge ) {
	$given = trim( (string) $given );
	$prefix = $edge . '/embed/';
	if ( 0 === strpos( $given, $prefix ) ) {
		$given = (string) strtok( substr( $given, strlen( $prefix ) ), '?#' );
	}
	if ( strlen( $given ) > 4096 || ! preg_match( ANALYTICS_CHART_ID_PATTERN, $given ) ) {
		return null;
	}
	return $given;
}

/**
 * Why a chart cannot be shown, for whoever may fix it; readers see nothing.
 *
 * @param string $message What to do.
 * @return string
 */
function analytics_chart_notice( $message ) {
	if ( ! current_user_can( 'edit_posts' ) ) {
		return '';
	}
	return '<p class="analytics-chart-notice" role="note">' . esc_html( $message ) . '</p>';
}

/**
 * The iframe for one chart. Attributes: `id` (required), `height` (pixels, 80-2000), `theme`
 * (light, dark, auto), `range` and `locale` (passed to the embed page), `title`.
 *
 * @param array $attributes From the shortcode or the block.
 * @return string HTML.
 */
function analytics_chart_frame( $attributes ) {
	$edge = analytics_chart_edge_url();
	if ( null === $edge ) {
		return analytics_chart_notice( __( 'Analytics Chart: the site has no edge URL yet. An administrator sets it in Settings → Analytics Chart.', 'analytics-chart' ) );
	}
	$id = analytics_chart_id_from( isset( $attributes['id'] ) ? $attributes['id'] : '', $edge );
	if ( null === $id ) {
		return analytics_chart_notice( __( 'Analytics Chart: that is not a chart id. Paste the id (or the embed URL) you were given.', 'analytics-chart' ) );
	}
	$query  = array();
	$height = ANALYTICS_CHART_DEFAULT_HEIGHT;
	if ( isset( $attributes['height'] ) && '' !== $attributes['height'] ) {
		$height = max( 80, min( 2000, absint( $attributes['height'] ) ) );
		if ( ANALYTICS_CHART_DEFAULT_HEIGHT !== $height ) {
			$query['height'] = $height;
		}
	}
	if ( isset( $attributes['theme'] ) && in_array( $attributes['theme'], array( 'light', 'dark', 'auto' ), true ) ) {
		$query['theme'] = $attributes['theme'];
	}
	if ( isset( $attributes['range'] ) && preg_match( '/^[A-Za-z0-9_-]{1,40}$/', (string) $attributes['range'] ) ) {
		$query['range'] = $attributes['range'];
	}
	if ( isset( $attributes['locale'] ) && preg_match( '/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/', (string) $attributes['locale'] ) ) {
		$query['locale'] = $attributes['locale'];
	}
	$title = isset( $attributes['title'] ) && '' !== trim( (string) $attributes['title'] )
		? (string) $attributes['title']
		: __( 'Chart', 'analytics-chart' );
	$src   = $edge . '/embed/' . $id . ( $query ? '?' . http_build_query( $query, '', '&', PHP_QUERY_RFC3986 ) : '' );
	return sprintf(
		'<iframe class="analytics-chart-frame" src="%s" title="%s" width="100%%" height="%d" style="border:0" loading="lazy"></iframe>',
		esc_url( $src, array( 'http', 'https' ) ),
		esc_attr( $title ),
		$height
	);
}
