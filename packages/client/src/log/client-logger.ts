/** A message alone, or structured fields and then a message: the calls pino's loggers take. */
export interface LogFunction {
  (message: string): void;
  (fields: object, message?: string): void;
}

/**
 * The logger this package writes to and hands to handlers, by shape rather than by library, so an
 * application is not made to install one: a pino logger is one, and so is anything with these methods.
 */
export interface ClientLogger {
  readonly debug: LogFunction;
  readonly info: LogFunction;
  readonly warn: LogFunction;
  readonly error: LogFunction;
}
