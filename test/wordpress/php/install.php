<?php
/**
 * Installs WordPress into the database wp-config.php names (what the install screen does), makes
 * the test theme the active one, and creates one user per role, each with an application
 * password for the REST API. Prints the users as JSON. Run with the PHP CLI in the install dir.
 */

define( 'WP_INSTALLING', true );
require getcwd() . '/wp-load.php';

// The install would e-mail the administrator; there is no mail here.
function wp_new_blog_notification() {}

require_once ABSPATH . 'wp-admin/includes/upgrade.php';

$admin_password = wp_generate_password( 24, false );
$installed      = wp_install( 'Analytics test blog', 'administrator', 'administrator@example.test', false, '', $admin_password );
switch_theme( 'plain' );
// Avatars come from gravatar.com, which a test machine cannot reach.
update_option( 'show_avatars', 0 );

$users = array(
	'administrator' => array(
		'id'       => (int) $installed['user_id'],
		'password' => $admin_password,
	),
);
foreach ( array( 'editor', 'author', 'contributor' ) as $role ) {
	$password = wp_generate_password( 24, false );
	$id       = wp_insert_user(
		array(
			'user_login' => $role,
			'user_pass'  => $password,
			'user_email' => $role . '@example.test',
			'role'       => $role,
		)
	);
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, $id->get_error_message() . "\n" );
		exit( 1 );
	}
	$users[ $role ] = array(
		'id'       => (int) $id,
		'password' => $password,
	);
}
foreach ( $users as $role => $user ) {
	$created = WP_Application_Passwords::create_new_application_password( $user['id'], array( 'name' => 'test' ) );
	if ( is_wp_error( $created ) ) {
		fwrite( STDERR, $created->get_error_message() . "\n" );
		exit( 1 );
	}
	$users[ $role ]['login']               = $role;
	$users[ $role ]['applicationPassword'] = $created[0];
	$users[ $role ]['unfilteredHtml']      = user_can( $user['id'], 'unfiltered_html' );
}
echo wp_json_encode( array( 'users' => $users ) );
