file(READ ${IN} CONTENT)
file(WRITE ${OUT} "R\"folio_css(${CONTENT})folio_css\"")
