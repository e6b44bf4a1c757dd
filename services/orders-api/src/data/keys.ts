import type { PrismaClient } from '@pmatch/db';

export async function findActiveKeyByHash(prisma: PrismaClient, keyHash: string) {
  return prisma.apiKey.findFirst({ where: { keyHash, revokedAt: null } });
}
