import { createServer } from 'node:net';
import { ephemeralPortRange, freePort, portStripe } from '@pmatch/testkit';

/** The test kit's ports for the servers a test starts: outside what the kernel gives connections. */
describe('freePort', () => {
  it('when ports are picked for test servers, then each is below the ephemeral range, distinct, in the set of this jest worker, and a server can listen on it', async () => {
    const [low] = ephemeralPortRange();
    expect(low).toBeGreaterThanOrEqual(28_000); // the premise: Linux's default range and this machine's leave room below for 8 workers

    const ports: number[] = [];
    for (let i = 0; i < 200; i += 1) ports.push(await freePort());

    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(low);
      expect(port % 8).toBe(portStripe()); // another jest worker picks from other ports
    }
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '0.0.0.0', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
