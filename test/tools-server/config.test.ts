/** The tool server's settings in the one configuration schema. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';

describe('issue-tracker tool server configuration', () => {
  it('defaults: port 9400, TLS verified, public links on the internal address, no tokens', () => {
    // The tools role's own configuration: the API's credentials are not its concern (configWithoutApiCredentials).
    const { toolServer } = loadConfig({ ISSUE_TRACKER_API_URL: 'https://gitlab.internal:8443/', ISSUE_TRACKER_PROJECT_PATH: 'ops/platform' }, { credentials: false });
    expect(toolServer).toMatchObject({ port: 9400, publicUrl: 'http://localhost:9400', tokens: [], identityBaseUrl: undefined });
    expect(toolServer.tracker).toMatchObject({ apiUrl: 'https://gitlab.internal:8443', baseUrl: 'https://gitlab.internal:8443', projectPath: 'ops/platform', verifySsl: true });
  });

  it('reads the spec\'s variables: public vs internal address, VERIFY_SSL false, the token, tokens list, identity provider', () => {
    const { toolServer } = loadConfig({
      ISSUE_TRACKER_BASE_URL: 'https://gitlab.example.com', ISSUE_TRACKER_API_URL: 'https://10.0.0.5', ISSUE_TRACKER_PROJECT_PATH: 'group/sub/project',
      ISSUE_TRACKER_VERIFY_SSL: 'false', ISSUE_TRACKER_MCP_TOKEN: 'tok', MCP_SERVICE_PORT: '9500', MCP_SERVICE_TOKENS: ' a, b ,,c',
      IDENTITY_BASE_URL: 'https://id.example.com/realms/ops/', MCP_SERVICE_URL: 'https://tools.example.com/',
    }, { credentials: false });
    expect(toolServer).toMatchObject({ port: 9500, publicUrl: 'https://tools.example.com', tokens: ['a', 'b', 'c'], identityBaseUrl: 'https://id.example.com/realms/ops' });
    expect(toolServer.tracker).toMatchObject({ baseUrl: 'https://gitlab.example.com', apiUrl: 'https://10.0.0.5', verifySsl: false, token: 'tok' });
  });

  it('names each bad variable', () => {
    const bad = () => loadConfig({ ISSUE_TRACKER_PROJECT_PATH: 'no-group', ISSUE_TRACKER_VERIFY_SSL: 'maybe', IDENTITY_BASE_URL: 'not a url' });
    expect(bad).toThrow(ConfigError);
    for (const name of ['ISSUE_TRACKER_PROJECT_PATH: must look like group/project', 'ISSUE_TRACKER_VERIFY_SSL', 'IDENTITY_BASE_URL']) expect(bad).toThrow(name);
  });
});
