import { Webhook } from 'standardwebhooks';
import { newSigningSecret } from '@pmatch/platform';
import { deliveryHeaders, signatureHeader, signingSecrets } from '../src/domain/signature';

describe('Standard Webhooks signatures', () => {
  test('when the published test vector is signed, then the signature is the one Standard Webhooks publishes', () => {
    const header = signatureHeader(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');

    expect(header).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  test('when headers are made for a body, then the official library verifies them over the exact bytes', () => {
    const secret = newSigningSecret();
    const body = '{"id":"evt_123456789012","object":"event","data":{"object":{"payer_name":"ヤマダ タロウ"}}}';

    const headers = deliveryHeaders([secret], 'evt_123456789012', new Date(), body);

    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  test('when a secret was rotated less than 24 hours ago, then two signatures are sent, each valid with its own secret only', () => {
    const now = new Date();
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const secrets = signingSecrets({ secret: current, previousSecret: previous, previousSecretExpiresAt: new Date(now.getTime() + 1000) }, now);
    const body = '{"id":"evt_123456789012"}';

    const headers = deliveryHeaders(secrets, 'evt_123456789012', now, body);

    const entries = headers['webhook-signature']!.split(' ');
    expect(entries).toHaveLength(2);
    const only = (entry: string) => ({ ...headers, 'webhook-signature': entry });
    expect(() => new Webhook(current).verify(body, only(entries[0]!))).not.toThrow();
    expect(() => new Webhook(previous).verify(body, only(entries[1]!))).not.toThrow();
    expect(() => new Webhook(previous).verify(body, only(entries[0]!))).toThrow();
    expect(() => new Webhook(current).verify(body, only(entries[1]!))).toThrow();
  });

  test('when the 24 hours of overlap have passed, then only the new secret signs', () => {
    const now = new Date();
    const secrets = signingSecrets({ secret: 'whsec_bmV3', previousSecret: 'whsec_b2xk', previousSecretExpiresAt: now }, now);

    expect(secrets).toEqual(['whsec_bmV3']);
  });
});
