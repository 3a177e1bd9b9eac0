// Committed migrations, listed explicitly so they run the same under tsx, tests and any bundler.
import { Migration20261121000000 } from './Migration20261121000000.js';
import { Migration20261121120000 } from './Migration20261121120000.js';
import { Migration20261122000000 } from './Migration20261122000000.js';
import { Migration20261123000000 } from './Migration20261123000000.js';
import { Migration20261123100000 } from './Migration20261123100000.js';
import { Migration20261123200000 } from './Migration20261123200000.js';
import { Migration20261123300000 } from './Migration20261123300000.js';
import { Migration20261124000000 } from './Migration20261124000000.js';
import { Migration20261124100000 } from './Migration20261124100000.js';
import { Migration20261125000000 } from './Migration20261125000000.js';
import { Migration20261126000000 } from './Migration20261126000000.js';
import { Migration20261126010000 } from './Migration20261126010000.js';
import { Migration20261126100000 } from './Migration20261126100000.js';
import { Migration20261126200000 } from './Migration20261126200000.js';
import { Migration20261127000000 } from './Migration20261127000000.js';
import { Migration20261127100000 } from './Migration20261127100000.js';
import { Migration20261127200000 } from './Migration20261127200000.js';
import { Migration20261127300000 } from './Migration20261127300000.js';
import { Migration20261127400000 } from './Migration20261127400000.js';
import { Migration20261202000000 } from './Migration20261202000000.js';

export const migrationsList = [
  { name: 'Migration20261121000000', class: Migration20261121000000 },
  { name: 'Migration20261121120000', class: Migration20261121120000 },
  { name: 'Migration20261122000000', class: Migration20261122000000 },
  { name: 'Migration20261123000000', class: Migration20261123000000 },
  { name: 'Migration20261123100000', class: Migration20261123100000 },
  { name: 'Migration20261123200000', class: Migration20261123200000 },
  { name: 'Migration20261123300000', class: Migration20261123300000 },
  { name: 'Migration20261124000000', class: Migration20261124000000 },
  { name: 'Migration20261124100000', class: Migration20261124100000 },
  { name: 'Migration20261125000000', class: Migration20261125000000 },
  { name: 'Migration20261126000000', class: Migration20261126000000 },
  { name: 'Migration20261126010000', class: Migration20261126010000 },
  { name: 'Migration20261126100000', class: Migration20261126100000 },
  { name: 'Migration20261126200000', class: Migration20261126200000 },
  { name: 'Migration20261127000000', class: Migration20261127000000 },
  { name: 'Migration20261127100000', class: Migration20261127100000 },
  { name: 'Migration20261127200000', class: Migration20261127200000 },
  { name: 'Migration20261127300000', class: Migration20261127300000 },
  { name: 'Migration20261127400000', class: Migration20261127400000 },
  { name: 'Migration20261202000000', class: Migration20261202000000 },
];
