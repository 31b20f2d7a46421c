// CSV records as Go's encoding/csv reads them with default settings: quoted fields may hold
// commas, quotes and newlines ("" is a quote); empty lines are skipped; a bare quote inside an
// unquoted field, or text after a closing quote, is an error; \r\n ends a line like \n.

export class CsvError extends Error {}

export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    // an empty line is no record
    if (text[i] === '\n' || (text[i] === '\r' && text[i + 1] === '\n')) {
      i += text[i] === '\r' ? 2 : 1;
      line++;
      continue;
    }
    const record: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        const startLine = line;
        i++;
        for (;;) {
          if (i >= n) throw new CsvError(`record on line ${startLine}: extraneous or missing " in quoted-field`);
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n') line++;
          if (c === '\r' && text[i + 1] === '\n') {
            i++;
            continue;
          }
          field += c;
          i++;
        }
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && !(next === '\r' && text[i + 1] === '\n')) {
          throw new CsvError(`parse error on line ${line}: extraneous or missing " in quoted-field`);
        }
      } else {
        while (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          if (text[i] === '"') throw new CsvError(`parse error on line ${line}: bare " in non-quoted-field`);
          field += text[i];
          i++;
        }
      }
      record.push(field);
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '\r') i++;
      if (text[i] === '\n') {
        i++;
        line++;
      }
      break;
    }
    records.push(record);
  }
  return records;
}
