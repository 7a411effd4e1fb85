/** The coding assistants' mcpServers file: what `npm run mcp:config` writes and what `--check` accepts or refuses. */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findSecrets, generateMcpConfig, secretReason, shapeErrors, type McpConfigFile } from '../../shared/mcp-config.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'sb-mcp-config-'));

/** Runs `npm run mcp:config -- ...args` (through tsx, as npm does) and returns exit code and output. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(root, 'shared/cli/mcp-config.ts'), ...args], { cwd: root, env: process.env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function writeFile(name: string, content: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

const remoteTracker = {
  command: 'npx',
  args: ['-y', 'mcp-remote@0.15.1', 'http://localhost:9400/mcp', '--header', 'Authorization:${AUTH_HEADER}'],
  env: { AUTH_HEADER: 'Bearer <ACCESS_TOKEN>' },
};

describe('npm run mcp:config', () => {
  it('writes the spec\'s shape: the CRM from the compiled build, the gateway and issue tracker through the bridge, Linear and GitHub with placeholders', async () => {
    const { code, stdout } = await cli('--tools-url', 'https://tools.example.com', '--api-url', 'https://api.example.com');
    expect(code).toBe(0);
    const file = JSON.parse(stdout) as McpConfigFile;
    expect(shapeErrors(file)).toEqual([]);
    expect(findSecrets(file)).toEqual([]);
    expect(Object.keys(file.mcpServers)).toEqual(['switchboard-crm', 'switchboard-gateway', 'issue-tracker', 'linear', 'github']);
    expect(file.mcpServers['switchboard-crm']).toEqual({ command: 'node', args: [path.join(root, 'dist/shared/cli/mcp-crm.js')], env: { DATABASE_URL: process.env.DATABASE_URL } });
    expect(file.mcpServers['issue-tracker']!.args).toEqual(['-y', 'mcp-remote@0.15.1', 'https://tools.example.com/mcp', '--header', 'Authorization:${AUTH_HEADER}']);
    expect(file.mcpServers['issue-tracker']!.env).toEqual({ AUTH_HEADER: 'Bearer <ACCESS_TOKEN>' });
    expect(file.mcpServers['switchboard-gateway']!.args[2]).toBe('https://api.example.com/mcp');
    expect(file.mcpServers.linear).toMatchObject({ args: expect.arrayContaining(['https://mcp.linear.app/mcp']), env: { AUTH_HEADER: 'Bearer <API_KEY>' } });
    expect(file.mcpServers.github!.args).toContain('https://api.githubcopilot.com/mcp/');
  });

  it('never writes a database password: it becomes <PASSWORD>', () => {
    const file = generateMcpConfig({ root: '/srv/app', apiUrl: 'http://localhost:3000', toolsUrl: 'http://localhost:9400', databaseUrl: 'postgres://app:s3cr3t-pw@db:5432/app' });
    expect(file.mcpServers['switchboard-crm']!.env).toEqual({ DATABASE_URL: 'postgres://app:<PASSWORD>@db:5432/app' });
    expect(findSecrets(file)).toEqual([]);
  });
});

describe('npm run mcp:config -- --check FILE', () => {
  it('a good file: the local CRM server completes the MCP handshake and reports its tool count; remote entries are named, not started', async () => {
    const file = writeFile('good.json', {
      mcpServers: {
        crm: { command: process.execPath, args: ['--import', 'tsx', path.join(root, 'shared/cli/mcp-crm.ts')], env: { DATABASE_URL: process.env.DATABASE_URL! } },
        'issue-tracker': remoteTracker,
      },
    });
    const { code, stdout } = await cli('--check', file);
    expect(stdout).toMatch(/^crm: ok, 15 tools \(switchboard-crm\)$/m);
    expect(stdout).toMatch(/^issue-tracker: remote \(http:\/\/localhost:9400\/mcp through npx mcp-remote@0\.15\.1\): not started/m);
    expect(stdout).toContain(`${file}: ok`);
    expect(code).toBe(0);
  });

  it('a file with a real-looking token is refused, naming where, without repeating the token', async () => {
    const token = 'ghp_R4nd0mL00k1ngT0k3nV4lu3xyz0123456789';
    const file = writeFile('secret.json', {
      mcpServers: {
        github: { command: 'docker', args: ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: token } },
        'issue-tracker': remoteTracker,
      },
    });
    const { code, stdout } = await cli('--check', file);
    expect(code).toBe(1);
    expect(stdout).toContain('mcpServers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN: looks like a GitHub token; write a placeholder such as <ACCESS_TOKEN> or <API_KEY>');
    expect(stdout).not.toContain(token);
    expect(stdout).toContain('NOT OK');
  });

  it('a file whose command does not exist fails with "command not found"', async () => {
    const file = writeFile('missing-command.json', { mcpServers: { ghost: { command: 'switchboard-no-such-command', args: ['--stdio'] } } });
    const { code, stdout } = await cli('--check', file);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ghost: FAILED: command not found: switchboard-no-such-command$/m);
  });

  it('a server that never answers MCP fails with the timeout', async () => {
    const file = writeFile('silent.json', { mcpServers: { silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] } } });
    const { code, stdout } = await cli('--check', file, '--timeout', '1500');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^silent: FAILED: no MCP answer within 1500 ms/m);
  });

  it('a file of the wrong shape is refused with the path of each problem', async () => {
    const file = writeFile('shape.json', { mcpServers: { x: { command: 7, args: 'serve', cwd: '/tmp' }, y: { args: [] } } });
    const { code, stdout } = await cli('--check', file);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^mcpServers\.x\.command: /m);
    expect(stdout).toMatch(/^mcpServers\.x\.args: /m);
    expect(stdout).toMatch(/^mcpServers\.x: .*cwd/m);
    expect(stdout).toMatch(/^mcpServers\.y\.command: /m);
    expect((await cli('--check', writeFile('not-json.json', '{ nope'))).stdout).toMatch(/^\(root\): not JSON/m);
  });
});

describe('what counts as a real-looking secret', () => {
  it.each([
    ['glpat-AbCdEf1234567890xyzW', 'a GitLab token'],
    ['lin_api_0123456789abcdefABCDEF0123', 'a Linear key'],
    ['sk-proj-0123456789abcdefABCDEF', 'an API secret key (sk-)'],
    ['Authorization:Bearer abc123', 'holds a Bearer credential'],
    ['postgres://app:hunter2@db/app', 'holds a password in a URL'],
    ['Zk9qL2xQ8vRt5wYb3nHs7dXe1cFa6gU4', 'looks like a generated secret'],
    ['https://hooks.example.com/in?key=Zk9qL2xQ8vRt5wYb3nHs7dXe1cFa6gU4', 'looks like a generated secret'],
  ])('%s is refused (%s)', (value, why) => {
    expect(secretReason(value)).toContain(why);
  });

  it.each([
    '<ACCESS_TOKEN>', 'Bearer <API_KEY>', 'Authorization:${AUTH_HEADER}', 'https://mcp.linear.app/mcp', '/srv/switchboard/dist/shared/cli/mcp-crm.js',
    'postgres://postgres@127.0.0.1:5432/switchboard', 'postgres://app:<PASSWORD>@db/app', 'postgres://postgres@127.0.0.1:5432/sb_test_75da712f_b2c0da47_9c1e0f3a7d',
    'sb_test_75da712f_b2c0da47', '2f1c6a8e-3b7d-4e9f-a0c1-5d2e8b7f6a31', 'ghcr.io/github/github-mcp-server',
  ])('%s is accepted', (value) => {
    expect(secretReason(value)).toBeNull();
  });

  it('a variable named like a secret must hold a placeholder', () => {
    expect(secretReason('changeme', 'LINEAR_API_KEY')).toBe('LINEAR_API_KEY holds a value, not a placeholder');
    expect(secretReason('<API_KEY>', 'LINEAR_API_KEY')).toBeNull();
    expect(secretReason('production', 'NODE_ENV')).toBeNull();
  });
});
