/**
 * `tsx generate-part.ts FILE COUNT SEED NOW`: writes COUNT demo events (seed SEED, the 90 days
 * before NOW) to FILE as the NDJSON `engine load` reads, flushed to disk before it exits. A
 * process of its own, so that the scale run generates one part while the engine loads another.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { demoEventObjects } from '@analytics-chart/engine';

const [file, count, seed, now] = process.argv.slice(2);
if (!file || !count || !seed || !now) {
  throw new Error('usage: generate-part.ts FILE COUNT SEED NOW');
}
const fd = openSync(file, 'w');
let buffer: string[] = [];
for (const { timestamp, json } of demoEventObjects(Number(count), Number(seed), Number(now))) {
  buffer.push(`{"timestamp":${timestamp},"json":${JSON.stringify(json)}}`);
  if (buffer.length === 20_000) {
    writeSync(fd, `${buffer.join('\n')}\n`);
    buffer = [];
  }
}
if (buffer.length) writeSync(fd, `${buffer.join('\n')}\n`);
fsyncSync(fd);
closeSync(fd);
