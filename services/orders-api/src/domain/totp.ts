import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as authenticator apps expect it: SHA-1, 6 digits, 30-second steps. */
const PERIOD_SECONDS = 30;

function totp(secretBase32: string, label: string): TOTP {
  return new TOTP({ issuer: 'pmatch', label, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });
}

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app takes (typed in or pasted). */
export function totpUri(secretBase32: string, email: string): string {
  return totp(secretBase32, email).toString();
}

/**
 * The time step a code is good for at `now` (one step of drift either way), or undefined. A code
 * is accepted once: a step not after `lastStep` is refused, so a code seen over a shoulder or in
 * a log cannot be replayed.
 */
export function acceptedStep(secretBase32: string, code: string, now: Date, lastStep: bigint | null): bigint | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totp(secretBase32, '').validate({ token: code, timestamp: now.getTime(), window: 1 });
  if (delta === null) return undefined;
  const step = BigInt(Math.floor(now.getTime() / 1000 / PERIOD_SECONDS) + delta);
  if (lastStep !== null && step <= lastStep) return undefined;
  return step;
}

/** The code for `now`: what a person's authenticator shows (tests play that person). */
export function codeAt(secretBase32: string, now: Date): string {
  return totp(secretBase32, '').generate({ timestamp: now.getTime() });
}
