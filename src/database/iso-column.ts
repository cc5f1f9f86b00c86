/**
 * SQL for a timestamptz column as an ISO 8601 UTC string with milliseconds (the ORM's driver keeps
 * timestamps as text, so the API's format is made in PostgreSQL).
 */
export const isoColumn = (column: string) =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
