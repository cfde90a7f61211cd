/** The ZATCA_* configuration: unset means no connector; every bad value is one clear ConfigError. */
import { expect } from 'chai';
import { ConfigError, loadConfig, ZATCA_PUBLISHED_BASE_URLS } from '../../platform/config.js';

describe('configuration: ZATCA', function () {
  it('unset: no ZATCA connector', function () {
    expect(loadConfig({}).zatca).to.equal(null);
  });
  it('an environment takes ZATCA\'s published base URL and the defaults', function () {
    expect(loadConfig({ ZATCA_ENVIRONMENT: 'simulation' }).zatca).to.deep.equal({
      environment: 'simulation',
      baseUrl: ZATCA_PUBLISHED_BASE_URLS.simulation,
      timeoutMs: 30_000,
      maxAttempts: 3,
      retryBaseMs: 1000,
      maxRetryAfterMs: 30_000,
    });
    expect(ZATCA_PUBLISHED_BASE_URLS.production).to.equal('https://gw-fatoora.zatca.gov.sa/e-invoicing/core');
  });
  it('ZATCA_BASE_URL and the numbers override', function () {
    const z = loadConfig({ ZATCA_ENVIRONMENT: 'production', ZATCA_BASE_URL: 'https://proxy.example/zatca/', ZATCA_TIMEOUT_MS: '5000', ZATCA_MAX_ATTEMPTS: '1' }).zatca!;
    expect(z).to.include({ environment: 'production', baseUrl: 'https://proxy.example/zatca', timeoutMs: 5000, maxAttempts: 1 });
  });
  for (const [env, message] of [
    [{ ZATCA_ENVIRONMENT: 'core' }, /ZATCA_ENVIRONMENT must be sandbox, simulation or production/],
    [{ ZATCA_BASE_URL: 'https://proxy.example' }, /ZATCA_BASE_URL needs ZATCA_ENVIRONMENT/],
    [{ ZATCA_ENVIRONMENT: 'production', ZATCA_BASE_URL: 'ftp://x' }, /ZATCA_BASE_URL must be an absolute http\(s\) URL/],
    [{ ZATCA_ENVIRONMENT: 'production', ZATCA_BASE_URL: 'https://user:pw@x' }, /without credentials/],
    [{ ZATCA_ENVIRONMENT: 'production', ZATCA_TIMEOUT_MS: '-1' }, /ZATCA_TIMEOUT_MS must be a non-negative integer/],
  ] as const) {
    it(`refuses ${JSON.stringify(env)}`, function () {
      expect(() => loadConfig(env as NodeJS.ProcessEnv)).to.throw(ConfigError, message);
    });
  }
});
