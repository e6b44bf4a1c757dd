import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { AppError } from '@pmatch/contracts';
import type { Request } from 'express';

/**
 * How many uploads may be spooled and imported at once: a request takes a slot before its body is
 * read and gives it back once its file is removed, so the spool never holds more than `max` files.
 */
export class SpoolSlots {
  private taken = 0;

  constructor(readonly max: number) {}

  /** A slot, and the function that gives it back (once); undefined when all are taken. */
  tryTake(): (() => void) | undefined {
    if (this.taken >= this.max) return undefined;
    this.taken += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.taken -= 1;
    };
  }
}

/** An uploaded file kept on disk while it is checked and stored, so memory never holds it whole. */
export interface SpooledFile {
  bytes: number;
  read(): AsyncIterable<Uint8Array>;
  remove(): Promise<void>;
}

/**
 * Streams the request body to a temporary file under `directory`, showing every chunk to
 * `observe` (the signature check) on the way. More than `maxBytes` is 413 `body_too_large`, and
 * the part written is removed.
 */
export async function spoolBody(req: Request, directory: string, maxBytes: number, observe: (chunk: Uint8Array) => void): Promise<SpooledFile> {
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const encoding = req.get('content-encoding');
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    throw new AppError('parameter_invalid', 'Send the statement file as it is, without Content-Encoding.');
  }
  const folder = await mkdtemp(join(directory, 'statement-'));
  const path = join(folder, 'upload');
  const remove = () => rm(folder, { recursive: true, force: true });
  const file = createWriteStream(path);
  let bytes = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > maxBytes) throw tooLarge(maxBytes);
      observe(chunk);
      if (!file.write(chunk)) await once(file, 'drain');
    }
    file.end();
    await once(file, 'finish');
  } catch (error) {
    file.destroy();
    await remove();
    if (error instanceof AppError) throw error;
    throw new AppError('parameter_invalid', 'The statement upload was cut off before its end.', { cause: error });
  }
  return { bytes, read: () => createReadStream(path, { highWaterMark: 256 * 1024 }), remove };
}

function tooLarge(maxBytes: number): AppError {
  return new AppError('body_too_large', `A statement file may be at most ${maxBytes} bytes.`);
}
