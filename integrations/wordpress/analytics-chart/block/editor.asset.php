<?php
/**
 * The editor script's dependencies (WordPress's globals) and version: what a build step would
 * write, kept by hand because the script needs no build.
 *
 * @package AnalyticsChart
 */

return array(
	'dependencies' => array( 'wp-blocks', 'wp-element', 'wp-block-editor', 'wp-components', 'wp-i18n', 'wp-server-side-render' ),
	'version'      => '0.1.0',
);
