-- The run that holds a message while it submits it. A lease (locked_until) is kept alive while
-- its batch runs, and only its owner may extend or give it up: a run whose lease ran out can no
-- longer clear the lock another run has since taken.
ALTER TABLE messages ADD COLUMN locked_by uuid;
