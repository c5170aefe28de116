import { useEffect, useRef } from 'preact/hooks';

/** A `<dialog>` shown as a modal once mounted (focus kept inside, Escape closes it: the browser's own). */
export function useModal() {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return dialog;
}
