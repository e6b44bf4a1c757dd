import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError, WebhookVerifier } from '../src';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEXT_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const event = { id: 'evt_2Lk9Jh7Gf5Ds3Aq1Wz8Xc6Vb', object: 'event', type: 'order.paid', livemode: false, created_at: '2026-11-24T05:02:11.655Z', data: {} };
const body = JSON.stringify(event);

function signed(secrets: string[], payload = body, at = new Date()) {
  const signatures = secrets.map((s) => new Webhook(s).sign(event.id, at, payload)).join(' ');
  return { 'webhook-id': event.id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signatures };
}

describe('WebhookVerifier', () => {
  test('when a delivery is signed with the secret, then the event is returned, from Node or fetch headers alike', () => {
    const verifier = new WebhookVerifier(SECRET);
    const headers = signed([SECRET]);

    expect(verifier.verify(body, headers)).toEqual(event);
    expect(verifier.verify(Buffer.from(body), new Headers(headers))).toEqual(event);
    expect(verifier.verify(body, { ...headers, 'Webhook-Id': headers['webhook-id'] })).toEqual(event);
  });

  test('when the body was changed or the signature made with another secret, then it is refused', () => {
    const verifier = new WebhookVerifier(SECRET);

    expect(() => verifier.verify(body.replace('order.paid', 'order.canceled'), signed([SECRET]))).toThrow(WebhookVerificationError);
    expect(() => verifier.verify(body, signed([NEXT_SECRET]))).toThrow(WebhookVerificationError);
  });

  test('when the timestamp is older than 5 minutes or a header is missing, then it is refused', () => {
    const verifier = new WebhookVerifier(SECRET);
    const { 'webhook-signature': _dropped, ...unsigned } = signed([SECRET]);

    expect(() => verifier.verify(body, signed([SECRET], body, new Date(Date.now() - 10 * 60_000)))).toThrow(WebhookVerificationError);
    expect(() => verifier.verify(body, unsigned)).toThrow(/webhook-signature/);
  });

  test('when a secret is being rotated, then deliveries signed with either secret are verified by a verifier holding both', () => {
    const verifier = new WebhookVerifier([NEXT_SECRET, SECRET]);

    expect(verifier.verify(body, signed([SECRET]))).toEqual(event);
    expect(verifier.verify(body, signed([NEXT_SECRET]))).toEqual(event);
    expect(new WebhookVerifier(SECRET).verify(body, signed([NEXT_SECRET, SECRET]))).toEqual(event);
  });
});
