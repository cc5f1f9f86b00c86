import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  configPath,
  DEFAULT_URL,
  normaliseUrl,
  readConfig,
  resolveSettings,
  saveConfig,
} from './config-store';

describe(configPath.name, () => {
  it('lives under XDG_CONFIG_HOME when it is set', () => {
    expect(configPath({ XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/hooktrail/config.json');
  });

  it('lives under ~/.config otherwise, or when XDG_CONFIG_HOME is not absolute', () => {
    const expected = join(homedir(), '.config', 'hooktrail', 'config.json');
    expect(configPath({})).toBe(expected);
    expect(configPath({ XDG_CONFIG_HOME: 'relative' })).toBe(expected);
  });
});

describe(resolveSettings.name, () => {
  const stored = { url: 'https://stored.example.com', api_key: 'htk_stored' };

  it('takes the stored URL and key', () => {
    expect(resolveSettings({}, stored)).toEqual({ url: 'https://stored.example.com', apiKey: 'htk_stored' });
  });

  it('lets the environment variables override the file', () => {
    const env = { HOOKTRAIL_URL: 'http://127.0.0.1:3999/', HOOKTRAIL_API_KEY: 'htk_env' };
    expect(resolveSettings(env, stored)).toEqual({ url: 'http://127.0.0.1:3999', apiKey: 'htk_env' });
  });

  it('falls back to http://localhost:3000 and no key', () => {
    expect(resolveSettings({}, {})).toEqual({ url: DEFAULT_URL, apiKey: undefined });
  });
});

describe(normaliseUrl.name, () => {
  it('drops trailing slashes and keeps a path prefix', () => {
    expect(normaliseUrl('https://example.com/hooktrail//')).toBe('https://example.com/hooktrail');
  });

  it('refuses what is not an http(s) URL', () => {
    expect(() => normaliseUrl('localhost:3000')).toThrow('not an http(s) URL: localhost:3000');
    expect(() => normaliseUrl('nope')).toThrow('not a URL: nope');
  });
});

describe(saveConfig.name, () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'hooktrail-config-'));
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it('writes a file only its owner can read, replacing a wider one', async () => {
    const path = join(directory, 'hooktrail', 'config.json');
    await saveConfig(path, { url: 'http://a' });
    await chmod(path, 0o644);

    await saveConfig(path, { url: 'http://b', api_key: 'htk_b' });

    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ url: 'http://b', api_key: 'htk_b' });
    expect(await readConfig(path)).toEqual({ url: 'http://b', api_key: 'htk_b' });
  });

  it('reads a missing file as empty', async () => {
    expect(await readConfig(join(directory, 'none.json'))).toEqual({});
  });
});
