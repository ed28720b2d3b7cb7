// Forgejo's MarkdownOption and MarkupOption (Go field names, as Forgejo's JSON has them).
import { Type } from 'typebox';

export const MarkdownOption = Type.Object(
  {
    Text: Type.Optional(Type.String({ description: 'Text markdown to render', maxLength: 1 << 20 })),
    Mode: Type.Optional(Type.String({ description: 'Mode to render (comment, gfm, markdown, wiki)' })),
    Context: Type.Optional(
      Type.String({ description: 'Context to render: owner/repo that references point to' }),
    ),
    Wiki: Type.Optional(Type.Boolean({ description: 'Is it a wiki page?' })),
  },
  { title: 'MarkdownOption' },
);

export const MarkupOption = Type.Object(
  {
    Text: Type.Optional(Type.String({ description: 'Text markup to render', maxLength: 1 << 20 })),
    Mode: Type.Optional(Type.String({ description: 'Mode to render (comment, gfm, markdown, file)' })),
    Context: Type.Optional(Type.String({ description: 'Context to render' })),
    FilePath: Type.Optional(Type.String({ description: 'File path for detecting extension in file mode' })),
    BranchPath: Type.Optional(
      Type.String({ description: 'The current branch path where the form gets posted' }),
    ),
    Wiki: Type.Optional(Type.Boolean({ description: 'Is it a wiki page?' })),
  },
  { title: 'MarkupOption' },
);

export const RenderedHtml = Type.String({ description: 'The rendered HTML' });
