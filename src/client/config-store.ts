import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { CliError } from './cli-error';

export const DEFAULT_URL = 'http://localhost:3000';

/** What `hooktrail login` keeps (the CLI's own file, not an API shape). */
export interface StoredConfig {
  url?: string;
  api_key?: string;
}

export interface Settings {
  url: string;
  apiKey?: string;
}

/** `$XDG_CONFIG_HOME/hooktrail/config.json`, else `~/.config/hooktrail/config.json`. */
export function configPath(env: NodeJS.ProcessEnv): string {
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config');
  return join(base, 'hooktrail', 'config.json');
}

/** The URL without trailing slashes, so that paths can be appended; refuses anything but http(s). */
export function normaliseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`not an http(s) URL: ${value}`);
  return url.toString().replace(/\/+$/, '');
}

/** The environment variables override the stored file, field by field. */
export function resolveSettings(env: NodeJS.ProcessEnv, stored: StoredConfig): Settings {
  return {
    url: normaliseUrl(env.HOOKTRAIL_URL || stored.url || DEFAULT_URL),
    apiKey: env.HOOKTRAIL_API_KEY || stored.api_key,
  };
}

export async function readConfig(path: string): Promise<StoredConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    return JSON.parse(text) as StoredConfig;
  } catch {
    throw new CliError(`${path} is not valid JSON: run hooktrail login again`);
  }
}

/**
 * Writes the file readable by its owner only (it holds a credential): a temporary file made with mode
 * 0600 is renamed over the old one, so no reader sees a half-written file and an older, wider mode of
 * the file does not survive.
 */
export async function saveConfig(path: string, config: StoredConfig): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // The umask cannot widen 0600, but a file left by a crashed earlier run may have been made otherwise.
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}
