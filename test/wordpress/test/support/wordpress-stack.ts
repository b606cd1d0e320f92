/**
 * A real WordPress for one test file: Debian's `wordpress` copied into a temporary directory,
 * MariaDB on its own data directory and socket (no TCP port), Apache with mod_php on a free
 * loopback port with its own config. Each server is this process's child, stopped by its pid;
 * the machine's own services are never touched.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '@analytics-chart/test-kit/free-port';

const run = promisify(execFile);

const WORDPRESS = '/usr/share/wordpress';
const APACHE = '/usr/sbin/apache2';
const MODULES = '/usr/lib/apache2/modules';
const PHP_DIR = fileURLToPath(new URL('../../php/', import.meta.url));

/** What `.ci/run` installs for this suite, and where each is looked for. */
const REQUIRED: readonly [string, string][] = [
  [`${WORDPRESS}/wp-includes/version.php`, 'wordpress'],
  ['/usr/bin/mariadb-install-db', 'mariadb-server'],
  ['/usr/sbin/mariadbd', 'mariadb-server'],
  [APACHE, 'apache2'],
  ['/usr/bin/php', 'php-cli'],
];

/** A WordPress user of one role, with the application password the REST API accepts. */
export interface WordPressUser {
  id: number;
  login: string;
  password: string;
  applicationPassword: string;
  unfilteredHtml: boolean;
}

/** The running WordPress. */
export interface WordPressStack {
  /** The site's URL, `http://127.0.0.1:<port>`. */
  url: string;
  /** The install directory (ABSPATH). */
  dir: string;
  users: Record<'administrator' | 'editor' | 'author' | 'contributor', WordPressUser>;
  /** Runs one of this suite's PHP scripts with the PHP CLI in the install directory. */
  php(script: string, ...args: string[]): Promise<string>;
  /** Writes a must-use plugin (loaded on every request, before plugins). */
  mustUsePlugin(name: string, code: string): Promise<void>;
  /** Apache's and MariaDB's error logs, for a failure's message. */
  logs(): Promise<string>;
  stop(): Promise<void>;
}

/** Fails with what to install when a part of the stack is missing. */
export function checkWordPressStack(): void {
  const missing = REQUIRED.filter(([path]) => !existsSync(path)).map(([, pkg]) => pkg);
  const php = existsSync(MODULES) && readdirSync(MODULES).some((f) => /^libphp.*\.so$/.test(f));
  if (!php) missing.push('libapache2-mod-php');
  if (
    existsSync('/usr/bin/php') &&
    !execFileSync('/usr/bin/php', ['-m'], { encoding: 'utf8' }).split('\n').includes('mysqli')
  ) {
    missing.push('php-mysql');
  }
  if (missing.length) {
    throw new Error(
      `The WordPress test needs Debian's ${[...new Set(missing)].join(', ')}: run .ci/run, or apt-get install -y --no-install-recommends wordpress mariadb-server apache2 libapache2-mod-php php-mysql`,
    );
  }
}

/** A child process that must stay up; its output is kept for error messages. */
function daemon(command: string, args: string[]): { child: ChildProcess; output: () => string } {
  // Its own process group: Apache stops by signalling its whole group, which must not be ours.
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  return { child, output: () => output };
}

/** Stops a child by its pid and waits for it to exit. */
async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Resolves once something accepts connections at `target` (a socket path or a port). */
async function listening(target: string | number, what: string, output: () => string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket =
        typeof target === 'number'
          ? createConnection({ port: target, host: '127.0.0.1' })
          : createConnection({ path: target });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${what} did not start:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const isRoot = process.getuid?.() === 0;

/** Apache's config: prefork with mod_php, this directory only, logs in the temp directory. */
function apacheConfig(dir: string, port: number): string {
  const php = readdirSync(MODULES).find((f) => /^libphp.*\.so$/.test(f));
  const modules = [
    ['mpm_prefork_module', 'mod_mpm_prefork.so'],
    ['authz_core_module', 'mod_authz_core.so'],
    ['dir_module', 'mod_dir.so'],
    ['mime_module', 'mod_mime.so'],
    ['php_module', php],
  ];
  return [
    `ServerRoot ${dir}`,
    ...modules.map(([name, file]) => `LoadModule ${name} ${MODULES}/${file}`),
    `Listen 127.0.0.1:${port}`,
    'ServerName 127.0.0.1',
    `PidFile ${dir}/apache.pid`,
    `DefaultRuntimeDir ${dir}`,
    `Mutex file:${dir} default`,
    `ErrorLog ${dir}/apache-error.log`,
    'LogLevel warn',
    // Apache refuses to serve as root: its workers drop to www-data, as Debian's own config does.
    ...(isRoot ? ['User www-data', 'Group www-data'] : []),
    'StartServers 4',
    'MinSpareServers 2',
    'MaxSpareServers 8',
    'MaxRequestWorkers 32',
    // A browser's idle connections would each hold a prefork worker until they time out.
    'KeepAlive Off',
    'TypesConfig /etc/mime.types',
    `DocumentRoot ${dir}/wordpress`,
    'DirectoryIndex index.php',
    `<Directory ${dir}/wordpress>`,
    '  Require all granted',
    '  AllowOverride None',
    '</Directory>',
    '<FilesMatch "\\.php$">',
    '  SetHandler application/x-httpd-php',
    '</FilesMatch>',
    '',
  ].join('\n');
}

/** wp-config.php for this install: the socket, the site URL, application passwords over http. */
function wpConfig(socket: string, url: string): string {
  const salt = () => crypto.randomUUID() + crypto.randomUUID();
  const keys = ['AUTH', 'SECURE_AUTH', 'LOGGED_IN', 'NONCE'].flatMap((k) => [
    `define('${k}_KEY', '${salt()}');`,
    `define('${k}_SALT', '${salt()}');`,
  ]);
  return `<?php
define('DB_NAME', 'wordpress');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', 'localhost:${socket}');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
${keys.join('\n')}
$table_prefix = 'wp_';
define('WP_HOME', '${url}');
define('WP_SITEURL', '${url}');
// Application passwords need https or a local environment.
define('WP_ENVIRONMENT_TYPE', 'local');
define('FS_METHOD', 'direct');
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
// No calls home (updates, news, avatars' checks): only this site and the edge on 127.0.0.1.
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('WP_DEBUG', false);
if (!defined('ABSPATH')) define('ABSPATH', __DIR__ . '/');
require_once ABSPATH . 'wp-settings.php';
`;
}

/** The smallest classic theme: the post's title and content between wp_head and wp_footer. */
const THEME_STYLE = '/*\nTheme Name: Plain\nDescription: The test theme.\nVersion: 1.0\n*/\n';
const THEME_INDEX = `<!doctype html>
<html <?php language_attributes(); ?>>
<head><meta charset="<?php bloginfo('charset'); ?>"><?php wp_head(); ?></head>
<body <?php body_class(); ?>>
<main>
<?php while (have_posts()) : the_post(); ?>
<article><h1><?php the_title(); ?></h1><div class="entry-content"><?php the_content(); ?></div></article>
<?php endwhile; ?>
</main>
<?php wp_footer(); ?>
</body>
</html>
`;

/** Starts MariaDB and Apache, installs WordPress and creates one user per role. */
export async function startWordPress(): Promise<WordPressStack> {
  checkWordPressStack();
  const dir = await mkdtemp(join(tmpdir(), 'wordpress-test-'));
  // Apache's workers (www-data when this runs as root) read the site and reach the socket.
  await chmod(dir, 0o755);
  const socket = join(dir, 'mysql.sock');
  let mariadb: ReturnType<typeof daemon> | undefined;
  let apache: ReturnType<typeof daemon> | undefined;
  const logs = async () => {
    const { readFile } = await import('node:fs/promises');
    const read = (file: string) => readFile(join(dir, file), 'utf8').catch(() => '');
    return `apache:\n${await read('apache-error.log')}\n${apache?.output() ?? ''}\nmariadb:\n${mariadb?.output() ?? ''}`;
  };
  const stop = async () => {
    await stopChild(apache?.child);
    await stopChild(mariadb?.child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const user = isRoot ? ['--user=root'] : [];
    const site = join(dir, 'wordpress');
    await Promise.all([
      run('/usr/bin/mariadb-install-db', [
        '--no-defaults',
        `--datadir=${dir}/mysql`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        ...user,
      ]),
      (async () => {
        // Debian links some files to other packages; copied as files, Apache serves them as any other.
        await cp(WORDPRESS, site, { recursive: true, dereference: true });
        // Debian's wp-config.php reads /etc/wordpress; this install has its own.
        await rm(join(site, 'wp-config.php'));
        await rm(join(site, '.htaccess'), { force: true });
        await writeFile(join(site, 'wp-config.php'), wpConfig(socket, url));
        await mkdir(join(site, 'wp-content/themes/plain'), { recursive: true });
        await writeFile(join(site, 'wp-content/themes/plain/style.css'), THEME_STYLE);
        await writeFile(join(site, 'wp-content/themes/plain/index.php'), THEME_INDEX);
        await mkdir(join(site, 'wp-content/mu-plugins'), { recursive: true });
        await writeFile(join(dir, 'httpd.conf'), apacheConfig(dir, port));
      })(),
    ]);
    mariadb = daemon('/usr/sbin/mariadbd', [
      '--no-defaults',
      `--datadir=${dir}/mysql`,
      `--socket=${socket}`,
      `--pid-file=${dir}/mariadb.pid`,
      '--skip-networking',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=32M',
      '--innodb-flush-log-at-trx-commit=0',
      ...user,
    ]);
    apache = daemon(APACHE, ['-f', join(dir, 'httpd.conf'), '-DFOREGROUND']);
    const mariadbOutput = mariadb.output;
    const apacheOutput = apache.output;
    await Promise.all([
      listening(socket, 'MariaDB', mariadbOutput),
      listening(port, 'Apache', apacheOutput),
    ]);
    await run('/usr/bin/php', [
      '-r',
      `$db = new mysqli(null, 'root', '', '', 0, '${socket}'); $db->query('CREATE DATABASE wordpress');`,
    ]);
    const php = async (script: string, ...args: string[]) => {
      try {
        const { stdout } = await run('/usr/bin/php', [join(PHP_DIR, script), ...args], {
          cwd: site,
          maxBuffer: 16 << 20,
        });
        return stdout;
      } catch (error) {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        throw new Error(`php ${script} failed:\n${stderr ?? ''}\n${stdout ?? ''}`);
      }
    };
    const { users } = JSON.parse(await php('install.php')) as Pick<WordPressStack, 'users'>;
    // The site's own files stay the installer's; wp-content is the web server's to write, as on
    // a host where an administrator uploads plugins.
    if (isRoot) await run('chown', ['-R', 'www-data:www-data', join(site, 'wp-content')]);
    return {
      url,
      dir: site,
      users,
      php,
      mustUsePlugin: (name, code) => writeFile(join(site, 'wp-content/mu-plugins', name), code),
      logs,
      stop,
    };
  } catch (error) {
    const message = `${(error as Error).message}\n${await logs()}`;
    await stop();
    throw new Error(message);
  }
}
