import { LEASE_MARGIN_MS, loadConfig } from '../src/config';

const base = { NODE_ENV: 'test', SECRETS_KEY: 'config-test-secrets-key' };

describe('dispatcher configuration', () => {
  test('when nothing is set, then a receiver has 10 seconds to answer and the lease outlasts that and the write after it', () => {
    const config = loadConfig(base);

    expect(config.DELIVERY_TIMEOUT_MS).toBe(10_000);
    expect(config.DELIVERY_LEASE_MS).toBeGreaterThanOrEqual(config.DELIVERY_TIMEOUT_MS + LEASE_MARGIN_MS);
  });

  test('when the answer deadline is set above 10 seconds, then the configuration is refused', () => {
    expect(() => loadConfig({ ...base, DELIVERY_TIMEOUT_MS: '10001' })).toThrow(/DELIVERY_TIMEOUT_MS/);
  });

  test('when the lease leaves less than the safety margin after the answer deadline, then the configuration is refused, and at the margin it is accepted', () => {
    expect(() => loadConfig({ ...base, DELIVERY_TIMEOUT_MS: '3000', DELIVERY_LEASE_MS: String(3000 + LEASE_MARGIN_MS - 1) })).toThrow(
      /DELIVERY_LEASE_MS: must be at least DELIVERY_TIMEOUT_MS/,
    );
    expect(() => loadConfig({ ...base, DELIVERY_TIMEOUT_MS: '3000', DELIVERY_LEASE_MS: '3001' })).toThrow(/DELIVERY_LEASE_MS/);
    expect(loadConfig({ ...base, DELIVERY_TIMEOUT_MS: '3000', DELIVERY_LEASE_MS: String(3000 + LEASE_MARGIN_MS) }).DELIVERY_LEASE_MS).toBe(
      3000 + LEASE_MARGIN_MS,
    );
  });

  test('when NODE_ENV is production, then WEBHOOK_ALLOWED_CIDRS and WEBHOOK_CA_FILE are each refused, and without them it starts', () => {
    const production = { NODE_ENV: 'production', SECRETS_KEY: 'a-production-secrets-key-of-our-own', SMTP_URL: 'smtps://mail.example.com:465' };

    expect(() => loadConfig({ ...production, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' })).toThrow(/WEBHOOK_ALLOWED_CIDRS: is for test receivers only/);
    expect(() => loadConfig({ ...production, WEBHOOK_CA_FILE: '/etc/test-ca.pem' })).toThrow(/WEBHOOK_CA_FILE: is for test receivers only/);
    expect(loadConfig({ ...production, WEBHOOK_ALLOWED_CIDRS: '', WEBHOOK_CA_FILE: '' })).toMatchObject({ WEBHOOK_ALLOWED_CIDRS: [], NODE_ENV: 'production' });
    expect(loadConfig({ ...base, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_CA_FILE: '/tmp/ca.pem' }).WEBHOOK_ALLOWED_CIDRS).toEqual(['127.0.0.0/8']);
  });

  test('when NODE_ENV is production and SMTP_URL is not set, then the configuration is refused saying why; set, it is accepted', () => {
    const production = { NODE_ENV: 'production', SECRETS_KEY: 'a-production-secrets-key-of-our-own' };

    expect(() => loadConfig(production)).toThrow(/SMTP_URL: must be set in production \(smtp:\/\/ or smtps:\/\/\)/);
    expect(() => loadConfig({ ...production, SMTP_URL: '' })).toThrow(/SMTP_URL: must be set in production/);
    expect(() => loadConfig({ ...production, SMTP_URL: 'http://mail.example.com' })).toThrow(/SMTP_URL/);
    expect(loadConfig({ ...production, SMTP_URL: 'smtp://mail.example.com:587' }).SMTP_URL).toBe('smtp://mail.example.com:587');
  });

  test('when SMTP_URL is not set outside production, then e-mails go to MAIL_DIR, .tmp/mail unless set', () => {
    const config = loadConfig(base);

    expect({ smtpUrl: config.SMTP_URL, mailDir: config.MAIL_DIR }).toEqual({ smtpUrl: undefined, mailDir: '.tmp/mail' });
    expect(loadConfig({ ...base, MAIL_DIR: '/var/tmp/pmatch-mail' }).MAIL_DIR).toBe('/var/tmp/pmatch-mail');
  });

  test('when name servers for webhook hosts are set, then IP addresses with optional ports are taken and anything else is refused', () => {
    expect(loadConfig({ ...base, WEBHOOK_DNS_SERVERS: '9.9.9.9, 127.0.0.1:5353,[2001:db8::1]:53,2001:db8::2' }).WEBHOOK_DNS_SERVERS).toEqual([
      '9.9.9.9',
      '127.0.0.1:5353',
      '[2001:db8::1]:53',
      '2001:db8::2',
    ]);
    expect(loadConfig(base)).toMatchObject({ WEBHOOK_DNS_SERVERS: [], WEBHOOK_DNS_TIMEOUT_MS: 5000, WEBHOOK_DNS_LOOKUPS_PER_ORGANISATION: 4 });
    for (const bad of ['dns.example', '1.2.3.4:99999', '[not-v6]:53']) {
      expect(() => loadConfig({ ...base, WEBHOOK_DNS_SERVERS: bad })).toThrow(/WEBHOOK_DNS_SERVERS: must be IP addresses/);
    }
  });
});
