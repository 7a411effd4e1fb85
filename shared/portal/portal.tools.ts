/** The portal's agent tools: answering from the person's own documents. */
import { defineTool } from '../tools.js';
import { z } from '../zod.js';
import { ValidationError } from '../errors.js';
import { searchDocuments } from './documents.js';

export const portalTools = [
  defineTool({
    name: 'search_documents',
    description:
      "Searches the documents the user uploaded to the portal (full text; use key words or a \"quoted phrase\"). Returns the best passages with the file name of each; name the file when you answer from it. Only the current user's documents are searched.",
    executor: 'portal',
    input: z.object({
      query: z.string().trim().min(1).max(500).describe('words or a "quoted phrase" to look for'),
      limit: z.number().int().min(1).max(10).default(5).describe('how many passages to return'),
    }),
    handler: async (input, { caller }) => {
      // Scoped to the session's user: without one (gateway, MCP) there is nobody whose documents to search.
      if (!caller.user_id) throw new ValidationError('search_documents needs the user of a session; it is only available to the agent within a session.');
      const hits = await searchDocuments(caller.user_id, input.query, input.limit);
      return { hits: hits.map((h) => ({ filename: h.filename, document_id: h.document_id, snippet: h.snippet, rank: Number(h.rank.toFixed(4)) })) };
    },
  }),
];
