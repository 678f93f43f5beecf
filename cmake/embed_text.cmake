# cmake/embed_text.cmake — writes OUT, a C++ file defining flopwise::NAME as the text of IN (cmake -P).
file(READ ${IN} _text)
file(WRITE ${OUT} "// generated from ${IN} by cmake/embed_text.cmake\nnamespace flopwise {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"FWTEXT(${_text})FWTEXT\";\n}  // namespace flopwise\n")
