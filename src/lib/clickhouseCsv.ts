/**
 * Settings that make ClickHouse's CSVWithNames output follow the CSV rules of src/domain/csv.ts
 * (CRLF line ends, null as an empty unquoted cell): store settings, not a rule, so they live here.
 */
export const CSV_CLICKHOUSE_SETTINGS = {
  output_format_csv_crlf_end_of_line: 1,
  format_csv_null_representation: '',
} as const;
