import { readFileSync } from 'node:fs';

export const SERVICE_NAME = 'memory-service';
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
