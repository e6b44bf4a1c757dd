import { Webhook } from 'standardwebhooks';
import { newSigningSecret } from '@pmatch/platform';
import { deliveryHeaders, signatureHeader, signingSecrets } from '../src/domain/signature';

const HOUR = 3600_000;

/** The test vector Standard Webhooks publishes (REFERENCES "Webhooks"). */
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('Standard Webhooks signatures', () => {
  test('when the published test vector is signed, then the signature is the one Standard Webhooks publishes', () => {
    const header = signatureHeader([VECTOR.secret], VECTOR.id, VECTOR.timestamp, VECTOR.body);

    expect(header).toBe(VECTOR.signature);
  });

  test('when the published test vector is signed, then the standardwebhooks package signs it the same and verifies ours', () => {
    const ours = signatureHeader([VECTOR.secret], VECTOR.id, VECTOR.timestamp, VECTOR.body);
    const library = new Webhook(VECTOR.secret);

    const theirs = library.sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.body);

    expect(theirs).toBe(ours);
    // verify() checks the timestamp against the wall clock (5 minutes); the vector is from 2021.
    const wallClock = jest.spyOn(Date, 'now').mockReturnValue(VECTOR.timestamp * 1000);
    try {
      const headers = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': ours };
      expect(library.verify(VECTOR.body, headers)).toEqual(JSON.parse(VECTOR.body));
      expect(() => library.verify(VECTOR.body.replace('2432232314', '2432232315'), headers)).toThrow();
    } finally {
      wallClock.mockRestore();
    }
  });

  test('when headers are made for a body, then the official library verifies them over the exact bytes', () => {
    const secret = newSigningSecret();
    const body = '{"id":"evt_123456789012","object":"event","data":{"object":{"payer_name":"ヤマダ タロウ"}}}';

    const headers = deliveryHeaders([secret], 'evt_123456789012', new Date(), body);

    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });
});

describe('signing secrets during rotations', () => {
  const rotatedAt = new Date('2026-11-22T00:00:00Z');
  const [first, second, third] = [newSigningSecret(), newSigningSecret(), newSigningSecret()];
  // first replaced at 00:00 by second, second replaced at 06:00 by third.
  const endpoint = {
    secret: third,
    replaced: [
      { secret: first, expiresAt: new Date(rotatedAt.getTime() + 24 * HOUR) },
      { secret: second, expiresAt: new Date(rotatedAt.getTime() + 30 * HOUR) },
    ],
  };
  const signAt = (at: Date) => {
    const body = '{"id":"evt_123456789012"}';
    const headers = deliveryHeaders(signingSecrets(endpoint, at), 'evt_123456789012', at, body);
    const entries = headers['webhook-signature']!.split(' ');
    /** Which secrets verify the entry at each position (the library checks time against the wall clock). */
    const wallClock = jest.spyOn(Date, 'now').mockReturnValue(at.getTime());
    try {
      return entries.map((entry) =>
        [first, second, third].filter((secret) => {
          try {
            new Webhook(secret).verify(body, { ...headers, 'webhook-signature': entry });
            return true;
          } catch {
            return false;
          }
        }),
      );
    } finally {
      wallClock.mockRestore();
    }
  };

  test('when a secret was rotated twice within 24 hours, then three signatures are sent, newest first, each valid with its own secret only', () => {
    expect(signAt(new Date(rotatedAt.getTime() + 7 * HOUR))).toEqual([[third], [second], [first]]);
  });

  test('when the first replaced secret has had its 24 hours, then only the two newer ones sign', () => {
    expect(signAt(new Date(rotatedAt.getTime() + 24 * HOUR))).toEqual([[third], [second]]);
    expect(signAt(new Date(rotatedAt.getTime() + 30 * HOUR))).toEqual([[third]]);
  });
});
