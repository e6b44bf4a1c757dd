import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * A throwaway certificate authority (openssl), as services/webhook-dispatcher/test/support/tls.ts
 * makes for the tests: its certificate goes in the dispatcher's WEBHOOK_CA_FILE, and it issues the
 * receiver's certificate for 127.0.0.1. Nothing here is trusted anywhere else.
 */
export class TestCa {
  constructor(dir) {
    this.dir = dir;
    this.certFile = join(dir, 'ca.crt');
  }

  static create() {
    const ca = new TestCa(mkdtempSync(join(tmpdir(), 'pmatch-bench-ca-')));
    openssl([
      'req',
      '-x509',
      ...ecKey(join(ca.dir, 'ca.key')),
      '-out',
      ca.certFile,
      '-days',
      '3',
      '-subj',
      '/CN=pmatch bench CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    return ca;
  }

  issueServerCertificate() {
    const key = join(this.dir, 'server.key');
    const csr = join(this.dir, 'server.csr');
    const cert = join(this.dir, 'server.crt');
    const ext = join(this.dir, 'server.ext');
    writeFileSync(ext, 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
    openssl(['req', ...ecKey(key), '-out', csr, '-subj', '/CN=127.0.0.1']);
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      this.certFile,
      '-CAkey',
      join(this.dir, 'ca.key'),
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      '3',
      '-extfile',
      ext,
    ]);
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  }

  get caPem() {
    return readFileSync(this.certFile, 'utf8');
  }

  remove() {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function ecKey(keyFile) {
  return ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile];
}

function openssl(args) {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * The merchants' webhook receiver: a real HTTPS server on 127.0.0.1 in a worker thread of its own,
 * so arrival times are taken on an event loop that the notification sender never blocks. It keeps
 * the first arrival of each event (id, type, the deposit it concerns, time), counts repeats, and
 * checks the Standard Webhooks signature of one delivery in `verifyEvery`.
 */
export class WebhookReceiver {
  constructor(worker, port) {
    this.worker = worker;
    this.port = port;
    this.pending = new Map();
    this.nextRequest = 0;
    worker.on('message', (msg) => {
      const resolve = this.pending.get(msg.requestId);
      if (resolve) {
        this.pending.delete(msg.requestId);
        resolve(msg);
      }
    });
  }

  static async start(keyPair, { verifyEvery = 50 } = {}) {
    const worker = new Worker(new URL('./receiver-worker.mjs', import.meta.url), { workerData: { ...keyPair, verifyEvery } });
    const port = await new Promise((resolve, reject) => {
      worker.once('message', (msg) => resolve(msg.port));
      worker.once('error', reject);
    });
    return new WebhookReceiver(worker, port);
  }

  url(path) {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  request(type, extra = {}) {
    const requestId = ++this.nextRequest;
    return new Promise((resolve) => {
      this.pending.set(requestId, resolve);
      this.worker.postMessage({ type, requestId, ...extra });
    });
  }

  setSecret(path, secret) {
    return this.request('secret', { path, secret });
  }

  /** Counters only: cheap enough to poll. */
  counts() {
    return this.request('counts');
  }

  /** Every first arrival so far: [eventId, type, transactionId, arrivedAtMs]. */
  async arrivals() {
    return (await this.request('arrivals')).arrivals;
  }

  async close() {
    await this.request('close');
    await this.worker.terminate();
  }
}
