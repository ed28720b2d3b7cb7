// Types of markdown-it-task-lists (the package ships none).
declare module 'markdown-it-task-lists' {
  import type MarkdownIt from 'markdown-it';
  const taskLists: (
    md: InstanceType<typeof MarkdownIt>,
    options?: { enabled?: boolean; label?: boolean; labelAfter?: boolean },
  ) => void;
  export default taskLists;
}
