import { cookieOptions, loginCsrfCookieName, sessionCookieName, setupCookieName } from '../src/console/request';

describe("the console's cookies", () => {
  test('when the console is served over https (or in production), then its cookies are __Secure-, Secure and scoped to /dashboard, never Path=/', () => {
    const secure = { secure: true };

    expect([sessionCookieName(secure), loginCsrfCookieName(secure), setupCookieName(secure)]).toEqual([
      '__Secure-pmatch_session',
      '__Secure-pmatch_login',
      '__Secure-pmatch_setup',
    ]);
    expect(cookieOptions(secure)).toEqual({ httpOnly: true, secure: true, sameSite: 'lax', path: '/dashboard' });
    expect(cookieOptions(secure, 'strict')).toMatchObject({ sameSite: 'strict', path: '/dashboard' });
  });

  test('when the console runs locally over http, then the names carry no prefix (a browser would refuse __Secure- without https)', () => {
    expect(sessionCookieName({ secure: false })).toBe('pmatch_session');
    expect(cookieOptions({ secure: false })).toEqual({ httpOnly: true, secure: false, sameSite: 'lax', path: '/dashboard' });
  });
});
