#!/usr/bin/env node
/**
 * `pnpm pack:wordpress`: zips integrations/wordpress/analytics-chart into
 * integrations/wordpress/dist/analytics-chart.zip (git-ignored), the file a site owner uploads
 * under Plugins → Add New → Upload Plugin. The zip holds one top-level folder, `analytics-chart/`,
 * as WordPress expects. Prints the zip's path. Written with node:zlib so packing needs nothing
 * installed.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateRawSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'integrations/wordpress/analytics-chart');
export const PLUGIN_ZIP = join(root, 'integrations/wordpress/dist/analytics-chart.zip');

/** Every file under `dir`, sorted, so the same sources make the same zip. */
function filesUnder(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}

/** A zip archive (deflated entries, fixed 1980-01-01 timestamps) of `entries`. */
function zip(entries) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const packed = deflateRawSync(data, { level: 9 });
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(0x0800, 6); // names are UTF-8
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(0, 10); // time 00:00
    local.writeUInt16LE(0x21, 12); // date 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x0314, 4); // made by: Unix, 2.0
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // a regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** Writes the plugin's zip and returns its path. */
export function packWordPressPlugin() {
  const entries = filesUnder(source).map((path) => ({
    name: `analytics-chart/${relative(source, path).split(sep).join('/')}`,
    data: readFileSync(path),
  }));
  mkdirSync(dirname(PLUGIN_ZIP), { recursive: true });
  writeFileSync(PLUGIN_ZIP, zip(entries));
  return PLUGIN_ZIP;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${relative(process.cwd(), packWordPressPlugin())}\n`);
}
