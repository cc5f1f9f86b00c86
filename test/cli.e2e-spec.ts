import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { api, registerUser } from './support/api-client';
import { startTestApp, type TestApp } from './support/test-app';

function cli(databaseUrl: string, ...args: string[]) {
  const result = spawnSync(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', 'src/cli.ts', ...args],
    {
      cwd: join(__dirname, '..'),
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

describe('npm run cli -- set-plan', () => {
  let sut: TestApp;
  beforeAll(async () => {
    sut = await startTestApp();
  });
  afterAll(() => sut.close());

  it('changes the plan of a user (email compared case-insensitively), which applies at once', async () => {
    const user = await registerUser(sut.url);
    const result = cli(sut.env.DATABASE_URL, 'set-plan', ` ${user.email.toUpperCase()} `, 'starter');
    expect(result).toMatchObject({ status: 0, stdout: `${user.email} is now on the starter plan` });
    const me = await api(sut.url, 'GET', '/api/auth/me', { token: user.accessToken });
    expect(me.body.user.plan).toBe('starter');
  });

  it('exits non-zero with one clear line for an unknown email', () => {
    const result = cli(sut.env.DATABASE_URL, 'set-plan', 'nobody@example.com', 'pro');
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('no user with email "nobody@example.com"');
  });

  it('exits non-zero with one clear line for an unknown plan', () => {
    const result = cli(sut.env.DATABASE_URL, 'set-plan', 'someone@example.com', 'gold');
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('unknown plan "gold": use one of free, starter, pro, team');
  });

  it('prints the usage and exits non-zero for a wrong command', () => {
    const result = cli(sut.env.DATABASE_URL, 'set-plan', 'only-one-argument');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('usage: npm run cli -- set-plan <email> <plan>');
  });
});
