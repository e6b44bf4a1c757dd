-- The matcher writes a deposit's decision as one statement, with no transaction around it: the
-- order paid, the deposit decided, their events and outbox rows, each write conditional on the
-- rows being as the decision read them. A concurrent change can still make one conditional write
-- find its row changed after another has written (READ COMMITTED re-checks a row it waited for),
-- so the statement ends by calling this with whether it wrote the decision whole: if not, the
-- statement fails and takes back every row it wrote. Serialization failure, because the remedy is
-- the same: read again and decide again.
CREATE FUNCTION decision_written_whole(whole boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF NOT whole THEN
    RAISE serialization_failure USING MESSAGE = 'the decision was written in part: a row it relied on changed meanwhile';
  END IF;
  RETURN true;
END $$;
