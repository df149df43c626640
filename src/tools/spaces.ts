import { z } from 'zod';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { SpaceService } from '../spaces/space-service.js';

const spaceListOutput = z.strictObject({
  id: z.string().meta({ description: 'Give it (or the name) as `space` to the other tools.' }),
  name: z.string(),
  role: z.enum(['owner', 'writer', 'reader']).meta({ description: 'owner and writer may remember, correct and forget there; reader may only recall and list.' }),
  personal: z.boolean().meta({ description: 'The user\'s own space, shared with no one: the default of every tool.' }),
});

const spacesOutput = {
  spaces: z.array(spaceListOutput).meta({ description: 'The personal space first.' }),
  message: z.string(),
};

export function spacesTool(service: SpaceService): Tool {
  return defineTool({
    name: 'spaces',
    title: 'List memory spaces',
    description:
      'List the spaces the user keeps memories in, with their role in each: their personal space (the default of ' +
      'every tool) and spaces for separate work or shared with a household or team. Call it when the user mentions ' +
      'a project, client, family or team whose memories may be kept apart, then pass the space\'s name or id as ' +
      '`space` to remember, recall (which can search several at once), list_memories, correct, forget, confirm or brief.',
    scope: 'memory:read',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: z.strictObject({}),
    output: spacesOutput,
    errors: ['INVALID_INPUT', 'DATABASE_ERROR'],
    run: (_args, context) => service.list(context),
    present: (spaces) => ({
      spaces: spaces.map((space) => ({ id: space.id, name: space.name, role: space.role, personal: space.personal })),
      message: spaces.length === 1 ? '1 space' : `${spaces.length} spaces`,
    }),
  });
}
