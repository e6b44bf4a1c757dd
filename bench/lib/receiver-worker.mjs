import { createServer } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { Webhook } from 'standardwebhooks';

/** The receiver's thread: see WebhookReceiver in receiver.mjs. */

const secrets = new Map();
const firstArrival = new Map();
let requests = 0;
let repeats = 0;
let verified = 0;
let verifyFailures = 0;
let unparsable = 0;
let connections = 0;

/** The deposit an event concerns: the transaction itself, or for order.paid the paying transaction. */
function transactionOf(event) {
  const object = event?.data?.object;
  if (object?.object === 'transaction') return object.id;
  if (object?.object === 'order') return object.payment?.transaction_id ?? null;
  return null;
}

const server = createServer({ key: workerData.key, cert: workerData.cert, keepAliveTimeout: 30_000 }, (req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const arrivedAt = Date.now();
    requests += 1;
    const raw = Buffer.concat(chunks).toString('utf8');
    let event;
    try {
      event = JSON.parse(raw);
    } catch {
      unparsable += 1;
    }
    // The HTTPS baseline's requests are not events of the pipeline.
    if (event?.id !== undefined && req.url !== '/baseline') {
      if (firstArrival.has(event.id)) repeats += 1;
      else firstArrival.set(event.id, [event.id, event.type, transactionOf(event), arrivedAt]);
    }
    const secret = secrets.get(req.url);
    if (secret !== undefined && requests % workerData.verifyEvery === 0) {
      try {
        new Webhook(secret).verify(raw, {
          'webhook-id': req.headers['webhook-id'],
          'webhook-timestamp': req.headers['webhook-timestamp'],
          'webhook-signature': req.headers['webhook-signature'],
        });
        verified += 1;
      } catch {
        verifyFailures += 1;
      }
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});

server.on('secureConnection', () => (connections += 1));
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));

parentPort.on('message', (msg) => {
  const reply = (body) => parentPort.postMessage({ requestId: msg.requestId, ...body });
  switch (msg.type) {
    case 'secret':
      secrets.set(msg.path, msg.secret);
      reply({});
      break;
    case 'counts':
      reply({ requests, unique: firstArrival.size, repeats, verified, verifyFailures, unparsable, connections });
      break;
    case 'arrivals':
      reply({ arrivals: [...firstArrival.values()] });
      break;
    case 'close':
      server.closeAllConnections();
      server.close(() => reply({}));
      break;
    default:
      reply({ error: `unknown request ${msg.type}` });
  }
});
