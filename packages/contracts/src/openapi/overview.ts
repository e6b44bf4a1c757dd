import { LIMITS } from '../limits';

/** The introduction of the reference: what every operation has in common. */
export const API_DESCRIPTION = `
Register an order, send the buyer to its \`payment_url\`, and hear by webhook when a bank transfer
paid it. Deposits are matched to orders by amount and payer name; a deposit that could fit more
than one order is held until a person chooses.

## Authentication
Every request carries \`Authorization: Bearer <key>\`. A key belongs to one mode: \`svc_test_…\`
keys see only test data (and may make test deposits), \`svc_live_…\` keys only live data. A
read-only key gets \`403 insufficient_scope\` on every write. Keys are for servers: the API sends no
CORS headers.

## Requests and answers
Bodies are JSON objects of at most 1 MiB; an unknown field is refused (\`parameter_unknown\`), so a
typo never goes unseen. Amounts are integers in yen. Times are RFC 3339; we write UTC with
milliseconds, and times you send must carry an offset. Every response has a \`Request-Id\` header.

## Errors
Every error has the same body: \`{"error": {"type", "code", "message", "param"?, "request_id"}}\`.
\`code\` is what a program should branch on; each operation lists the codes it can answer.
A refused request stores nothing.

## Retries and idempotency
\`POST /v1/orders\` takes an \`Idempotency-Key\` header: a retry with the same key and body gets the
first answer and creates no second order (keys are remembered 24 hours). An \`external_id\` you
already used with the same content is answered with the existing order (200), so an order is never
registered twice either way.
\`429 rate_limited\` (by default a key may make 100 requests a second, in bursts of up to 200; an
address whose requests are refused \`401\` more than 5 times a second, after a burst of 50, is refused
whatever key it sends) and \`503 service_unavailable\` carry \`Retry-After\`: wait that long, then
send the request again.

## Lists
Lists answer \`{"object": "list", "data": [...], "has_more": bool}\`. Ask for the next page with
\`starting_after=<id of the last object>\` while \`has_more\` is true; \`limit\` is 1–${LIMITS.listLimitMax}
(default ${LIMITS.listLimitDefault}). Orders, payment links and transactions come newest first, events in the order they were recorded.

## Webhook deliveries
Each webhook endpoint receives the events of its mode as \`POST\` requests signed the Standard
Webhooks way (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`). Verify the signature over
the raw body, answer 2xx within 10 seconds, and do the work afterwards. A delivery that fails is
retried up to 7 times over about 45 hours, so the same event can arrive more than once and in another order than it
happened: de-duplicate by the event \`id\` and read the object again when its order matters.
`.trim();
