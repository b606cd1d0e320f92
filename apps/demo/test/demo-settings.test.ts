import { describe, expect, it } from 'vitest';
import { demoSettings } from '../src/demo-settings.ts';

describe('demoSettings', () => {
  it('needs nothing: every setting has a default', () => {
    const s = demoSettings({}, []);
    expect(s).toMatchObject({
      host: '127.0.0.1',
      port: 8787,
      portIsDefault: true,
      examplesPort: 8788,
      enginePort: undefined,
      events: 1_000_000,
      demoPassword: 'demo-password',
      idTtl: '10m',
      secureCookies: false,
      fresh: false,
      revokedIds: [],
      allowedOrigins: ['*'],
    });
    expect(s.dataDir).toMatch(/[\\/]\.data$/);
  });

  it('reads the environment and --fresh', () => {
    const s = demoSettings(
      {
        PORT: '9000',
        ENGINE_PORT: '0',
        DEMO_EVENTS: '5000',
        EDGE_REVOKED_IDS: ' jti-1, jti-2 ,',
        EDGE_ALLOWED_ORIGINS: 'https://cms.example.com',
        COOKIE_SECURE: 'true',
      },
      ['--fresh'],
    );
    expect(s).toMatchObject({
      port: 9000,
      portIsDefault: false,
      enginePort: 0,
      events: 5000,
      fresh: true,
      revokedIds: ['jti-1', 'jti-2'],
      allowedOrigins: ['https://cms.example.com'],
      secureCookies: true,
    });
  });

  it('names the first bad setting', () => {
    expect(() => demoSettings({ PORT: 'eighty' }, [])).toThrow(/^PORT: /);
    expect(() => demoSettings({ DEMO_PASSWORD: 'short' }, [])).toThrow(/^DEMO_PASSWORD: /);
    expect(() => demoSettings({}, ['--fast'])).toThrow(/unknown argument --fast/);
  });
});
