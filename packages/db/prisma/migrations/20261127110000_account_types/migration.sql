-- Banks name an account by bank code, branch code, 預金種目 and number; the type tells an
-- ordinary (普通) account from a current (当座) or savings (貯蓄) one of the same number, and bank
-- notifications and statements name accounts that way. Every account so far is ordinary.
ALTER TABLE bank_accounts ADD COLUMN account_type TEXT NOT NULL DEFAULT 'ordinary'
  CHECK (account_type IN ('ordinary', 'current', 'savings'));
