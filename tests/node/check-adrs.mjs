// Reads every ADR in a log4brains project folder (the one holding .log4brains.yml)
// and prints, as JSON, what log4brains understood of each: slug, title, status,
// deciders and publication date. tests/test_record_readers.py compares it with moot's.
import { Log4brains } from "@log4brains/core";

const l4b = Log4brains.create(process.argv[2]);
const adrs = await l4b.searchAdrs();
const read = adrs.map((adr) => ({
  slug: adr.slug,
  title: adr.title,
  status: adr.status,
  deciders: adr.deciders,
  publicationDate: adr.publicationDate,
}));
process.stdout.write(JSON.stringify(read, null, 2) + "\n");
