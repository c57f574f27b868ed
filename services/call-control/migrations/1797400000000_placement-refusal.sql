-- Up Migration

-- Aborts the statement that calls it: a call's placement is one statement (the call, its dial
-- timer, its seat's claim and its `call.placed` event), and a seat that took no claim must undo
-- the rest of it. The caller tells the refusal by its SQLSTATE and asks the seat why.
CREATE FUNCTION call_control.refuse_placement(seat_id text) RETURNS boolean
  LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the seat % took no claim', seat_id USING ERRCODE = 'SBS01';
END
$$;

-- Down Migration

DROP FUNCTION call_control.refuse_placement(text);
