<?php
/**
 * Installs a plugin zip exactly as Plugins → Add New → Upload Plugin does (Plugin_Upgrader over
 * the uploaded file), then activates it. Usage: php install-plugin.php ZIP (in the install dir).
 */

require getcwd() . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/admin.php';
require_once ABSPATH . 'wp-admin/includes/class-wp-upgrader.php';

wp_set_current_user( 1 );
$upgrader = new Plugin_Upgrader( new Automatic_Upgrader_Skin() );
$result   = $upgrader->install( $argv[1] );
if ( true !== $result ) {
	fwrite( STDERR, 'install failed: ' . wp_json_encode( is_wp_error( $result ) ? $result->get_error_messages() : $upgrader->skin->get_upgrade_messages() ) . "\n" );
	exit( 1 );
}
$plugin    = $upgrader->plugin_info();
$activated = activate_plugin( $plugin );
if ( is_wp_error( $activated ) ) {
	fwrite( STDERR, 'activation failed: ' . $activated->get_error_message() . "\n" );
	exit( 1 );
}
echo wp_json_encode( array( 'plugin' => $plugin ) );
