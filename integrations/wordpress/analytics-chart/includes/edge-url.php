<?php
/**
 * The edge's public URL: where charts come from, as the site owner set it in Settings.
 *
 * @package AnalyticsChart
 */

defined( 'ABSPATH' ) || exit;

/**
 * The edge URL in its one canonical form (scheme, host, optional port and path, no trailing
 * slash, no query or fragment), or null when the text is not such a URL.
 *
 * @param mixed $value What was typed or stored.
 * @return string|null
 */
function analytics_chart_normalize_edge_url( $value ) {
	if ( ! is_string( $value ) ) {
		return null;
	}
	$value = trim( $value );
	if ( '' === $value || strlen( $value ) > 500 ) {
		return null;
	}
	$parts = wp_parse_url( $value );
	if ( ! is_array( $parts ) || empty( $parts['host'] ) || empty( $parts['scheme'] ) ) {
		return null;
	}
	$scheme = strtolower( $parts['scheme'] );
	if ( 'http' !== $scheme && 'https' !== $scheme ) {
		return null;
	}
	// Credentials, a query or a fragment have no place in a base URL the embed paths are appended to.
	if ( isset( $parts['user'] ) || isset( $parts['pass'] ) || isset( $parts['query'] ) || isset( $parts['fragment'] ) ) {
		return null;
	}
	if ( ! preg_match( '/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/', $parts['host'] ) ) {
		return null;
	}
	$path = isset( $parts['path'] ) ? rtrim( $parts['path'], '/' ) : '';
	if ( '' !== $path && ! preg_match( '#^(/[A-Za-z0-9._~-]+)+$#', $path ) ) {
		return null;
	}
	$port = isset( $parts['port'] ) ? ':' . (int) $parts['port'] : '';
	return $scheme . '://' . strtolower( $parts['host'] ) . $port . $path;
}

/**
 * The configured edge URL, or null before the site owner set one.
 *
 * @return string|null
 */
function analytics_chart_edge_url() {
	return analytics_chart_normalize_edge_url( get_option( ANALYTICS_CHART_OPTION, '' ) );
}
