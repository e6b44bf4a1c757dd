import type { Server } from 'node:http';
import express, { Router } from 'express';
import { underPath } from '../src/http/under-path';

/**
 * A Router behind `underPath` is entered by the requests under its path, whatever their case, and
 * any other request passes it in the same turn of the event loop, where crossing the Router itself
 * would cost one.
 */
describe('underPath', () => {
  let server: Server;
  let baseUrl: string;
  const entered: string[] = [];

  beforeAll(async () => {
    const pages = Router();
    pages.use('/pay', (req, _res, next) => {
      entered.push(req.originalUrl);
      next();
    });
    // Its last layer a Router of its own, as the console's pages are: Express leaves such a Router
    // in a later turn of the event loop, whichever request crossed it.
    const tokenPages = Router();
    tokenPages.get('/pay/:token', (req, res) => {
      res.json({ page: req.params.token });
    });
    pages.use(tokenPages);
    const app = express();
    app.use((_req, res, next) => {
      // Set before the request reaches the pages; read by whatever answers it.
      res.locals.turnPassed = false;
      setImmediate(() => (res.locals.turnPassed = true));
      next();
    });
    app.use(underPath('/pay', pages));
    app.use((_req, res) => {
      res.json({ fellThrough: true, turnPassed: res.locals.turnPassed as boolean });
    });
    await new Promise<void>((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    baseUrl = `http://127.0.0.1:${address.port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  beforeEach(() => {
    entered.length = 0;
  });

  test('a request under the path is answered by the Router, in any case and with a trailing slash', async () => {
    for (const path of ['/pay/tok_1', '/PAY/tok_1', '/Pay/tok_1/']) {
      const response = await fetch(`${baseUrl}${path}`);
      expect(await response.json()).toEqual({ page: 'tok_1' });
    }
    expect(entered).toEqual(['/pay/tok_1', '/PAY/tok_1', '/Pay/tok_1/']);
  });

  test('a request under the path that the Router does not answer goes on past it', async () => {
    const response = await fetch(`${baseUrl}/pay`);
    expect(await response.json()).toEqual({ fellThrough: true, turnPassed: true });
    expect(entered).toEqual(['/pay']);
  });

  test('any other request passes without entering the Router, in the same turn of the event loop', async () => {
    for (const path of ['/v1/orders', '/payment', '/', '/v1/pay/tok_1']) {
      const response = await fetch(`${baseUrl}${path}`);
      expect(await response.json()).toEqual({ fellThrough: true, turnPassed: false });
    }
    expect(entered).toEqual([]);
  });
});
