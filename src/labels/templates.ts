// The label sets Forgejo ships (options/label): `Default`, scoped and exclusive ("Kind/Bug"), and
// `Advanced`, the same labels unscoped ("Kind: Bug"). A repository can be created with one
// (issue_labels) and /label/templates lists them.

export interface LabelTemplate {
  name: string;
  /** Six hex digits, without '#'. */
  color: string;
  description: string;
  exclusive: boolean;
}

type Row = [name: string, color: string, description: string];

// Kind, Reviewed, Status and Priority, with Forgejo's colors and descriptions.
const ROWS: Row[] = [
  ['Kind/Bug', 'ee0701', 'Something is not working'],
  ['Kind/Feature', '0288d1', 'New functionality'],
  ['Kind/Enhancement', '84b6eb', 'Improve existing functionality'],
  ['Kind/Security', '9c27b0', 'This is security issue'],
  ['Kind/Testing', '795548', 'Issue or pull request related to testing'],
  ['Kind/Breaking', 'c62828', "Breaking change that won't be backward compatible"],
  ['Kind/Documentation', '37474f', 'Documentation changes'],
  ['Reviewed/Duplicate', '616161', 'This issue or pull request already exists'],
  ['Reviewed/Invalid', '546e7a', 'Invalid issue'],
  ['Reviewed/Confirmed', '795548', 'Issue has been confirmed'],
  ["Reviewed/Won't Fix", 'eeeeee', "This issue won't be fixed"],
  ['Status/Need More Info', '424242', 'Feedback is required to reproduce issue or to continue work'],
  ['Status/Blocked', '880e4f', 'Something is blocking this issue or pull request'],
  ['Status/Abandoned', '000000', 'Somebody has started to work on this but abandoned work'],
  ['Priority/Critical', 'b71c1c', 'The priority is critical'],
  ['Priority/High', 'd32f2f', 'The priority is high'],
  ['Priority/Medium', 'e64a19', 'The priority is medium'],
  ['Priority/Low', '4caf50', 'The priority is low'],
];

export const LABEL_TEMPLATES: Readonly<Record<string, readonly LabelTemplate[]>> = {
  Advanced: ROWS.map(([name, color, description]) => ({
    name: name.replace('/', ': '),
    color,
    description,
    exclusive: false,
  })),
  Default: ROWS.map(([name, color, description]) => ({ name, color, description, exclusive: true })),
};

/** A template by name, in any case (Forgejo's file names are matched so on most systems). */
export function labelTemplate(name: string): readonly LabelTemplate[] | undefined {
  const key = Object.keys(LABEL_TEMPLATES).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : LABEL_TEMPLATES[key];
}
