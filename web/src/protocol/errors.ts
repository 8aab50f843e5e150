import type { StatusName } from './constants';

/** Bytes that do not follow the wire protocol (a bug on one side, or a truncated stream). */
export class ProtocolError extends Error {
  /** For request decoding: the status a server answers with. */
  readonly status: StatusName | null;

  constructor(message: string, status: StatusName | null = null) {
    super(message);
    this.name = 'ProtocolError';
    this.status = status;
  }
}
