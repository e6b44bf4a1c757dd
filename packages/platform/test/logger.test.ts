import { scrubCredentials } from '../src';

describe('credentials scrubbed from log lines', () => {
  test('when a line holds a console set-up link, in its query or in the old path form, then the token is replaced', () => {
    const token = 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0h';
    const line = JSON.stringify({
      msg: `opened https://shop.example/dashboard/setup-password?token=${token}&lang=en and /dashboard/setup-password/${token}`,
    });

    const scrubbed = scrubCredentials(line);

    expect(scrubbed).not.toContain(token);
    expect(scrubbed).toContain('/dashboard/setup-password?token=[token]&lang=en');
    expect(scrubbed).toContain('/dashboard/setup-password/[token]');
  });
});
